$offlisting
$offdigit

EQUATIONS
	w_upper_6__hi
	w_upper_11__hi
	w_upper_14__hi
	w_upper_18__hi
	w_upper_20__hi
	w_upper_23__hi
	w_upper_26__hi
	w_upper_28__hi
	w_upper_31__hi
	w_upper_4__hi
	w_upper_12__hi
	w_upper_13__hi
	w_lower_6__lo
	w_lower_11__lo
	w_lower_14__lo
	w_lower_18__lo
	w_lower_20__lo
	w_lower_23__lo
	w_lower_26__lo
	w_lower_28__lo
	w_lower_31__lo
	w_lower_4__lo
	w_lower_12__lo
	w_lower_13__lo
	private_upper_4__hi
	private_upper_6__hi
	private_upper_0__hi
	private_upper_1__hi
	private_lower_4__lo
	private_lower_6__lo
	private_lower_0__lo
	private_lower_1__lo
	margin_6__lo
	margin_11__lo
	margin_4__lo
	margin_7__lo
	margin_1__lo
	margin_0__lo
	objective;

POSITIVE VARIABLES
	t;

VARIABLES
	GAMS_OBJECTIVE
	w_6_
	w_11_
	w_14_
	w_18_
	w_20_
	w_23_
	w_26_
	w_28_
	w_31_
	w_4_
	w_12_
	w_13_
	w_private_4_
	w_private_6_
	w_private_0_
	w_private_1_;


w_upper_6__hi.. w_6_ - t =l= 0 ;
w_upper_11__hi.. w_11_ - t =l= 0 ;
w_upper_14__hi.. w_14_ - t =l= 0 ;
w_upper_18__hi.. w_18_ - t =l= 0 ;
w_upper_20__hi.. w_20_ - t =l= 0 ;
w_upper_23__hi.. w_23_ - t =l= 0 ;
w_upper_26__hi.. w_26_ - t =l= 0 ;
w_upper_28__hi.. w_28_ - t =l= 0 ;
w_upper_31__hi.. w_31_ - t =l= 0 ;
w_upper_4__hi.. w_4_ - t =l= 0 ;
w_upper_12__hi.. w_12_ - t =l= 0 ;
w_upper_13__hi.. w_13_ - t =l= 0 ;
w_lower_6__lo.. 0 =l= w_6_ + t ;
w_lower_11__lo.. 0 =l= w_11_ + t ;
w_lower_14__lo.. 0 =l= w_14_ + t ;
w_lower_18__lo.. 0 =l= w_18_ + t ;
w_lower_20__lo.. 0 =l= w_20_ + t ;
w_lower_23__lo.. 0 =l= w_23_ + t ;
w_lower_26__lo.. 0 =l= w_26_ + t ;
w_lower_28__lo.. 0 =l= w_28_ + t ;
w_lower_31__lo.. 0 =l= w_31_ + t ;
w_lower_4__lo.. 0 =l= w_4_ + t ;
w_lower_12__lo.. 0 =l= w_12_ + t ;
w_lower_13__lo.. 0 =l= w_13_ + t ;
private_upper_4__hi.. w_private_4_ - t =l= 0 ;
private_upper_6__hi.. w_private_6_ - t =l= 0 ;
private_upper_0__hi.. w_private_0_ - t =l= 0 ;
private_upper_1__hi.. w_private_1_ - t =l= 0 ;
private_lower_4__lo.. 0 =l= w_private_4_ + t ;
private_lower_6__lo.. 0 =l= w_private_6_ + t ;
private_lower_0__lo.. 0 =l= w_private_0_ + t ;
private_lower_1__lo.. 0 =l= w_private_1_ + t ;
margin_6__lo.. 1 =l= 0.14681917095796865*w_23_ + 0.14681917095796865*w_31_ + 0.6151559761887454*w_private_6_ ;
margin_11__lo.. 1 =l= 0.1949457516132066*w_18_ + 0.42859915142034577*w_20_ + 0.1949457516132066*w_26_ + 0.42859915142034577*w_28_ ;
margin_4__lo.. 1 =l= 0.40250535449109437*w_6_ + 0.23525152020535517*w_11_ + 0.40250535449109437*w_14_ + 0.23525152020535517*w_private_4_ ;
margin_7__lo.. 1 =l= 0.27866174005832978*w_18_ + 0.4640966558393754*w_20_ + 0.27866174005832978*w_26_ + 0.4640966558393754*w_28_ ;
margin_1__lo.. 1 =l= 0.17561380922414635*w_4_ + 0.17561380922414635*w_12_ + 0.849379732888058*w_13_ + 0.849379732888058*w_private_1_ ;
margin_0__lo.. 1 =l= 0.30444183418004178*w_23_ + 0.30444183418004178*w_31_ + 1.3217368604348763*w_private_0_ ;
objective.. GAMS_OBJECTIVE =e= t ;

t.l = 1.1003589922145744;
w_6_.l = 1.1003589922145744;
w_11_.l = 1.1003589922145744;
w_14_.l = 1.1003589922145744;
w_18_.l = 1.1003589922145744;
w_20_.l = 1.1003589922145744;
w_23_.l = 1.1003589922145744;
w_26_.l = 1.1003589922145744;
w_28_.l = 1.1003589922145744;
w_31_.l = 1.1003589922145744;
w_4_.l = 1.1003589922145744;
w_12_.l = 1.1003589922145744;
w_13_.l = 1.1003589922145744;
w_private_4_.l = 1.1003589922145744;
w_private_6_.l = 1.1003589922145744;
w_private_0_.l = 1.1003589922145744;
w_private_1_.l = 1.1003589922145744;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING lp minimizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

